"""The sound wing: sound packs, sample-exact mixing, offline renders, the live outputs (the
stream, the mixer fallback, the guard that outlives a lost card) and the events log.

Imports the rules wing only."""
