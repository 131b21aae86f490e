// Enhancements only: every page works without this script.
