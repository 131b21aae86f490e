// The TableService module.
