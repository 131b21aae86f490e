// The Views module.
