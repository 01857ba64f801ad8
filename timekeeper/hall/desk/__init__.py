"""The desk's side of the hall: what `timekeeper hall …` runs — its link to the bus,
the commands, the evening (director, its calls file, the results inbox), the pages it
serves (overview, board, players, static/) and the calls over a speaker. Imports the bus,
never the table."""
