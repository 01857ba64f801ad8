"""The table's side of the hall: what a box runs — its link to the bus (commands in,
status out), its pairing and result (tablematch), and what it says the desk can do when it
refuses a command (deskprompts). Imports the bus, never the desk."""
