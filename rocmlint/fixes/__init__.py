"""Automatic rewrites: a check's rewrite filled in for one finding and the edits of many
fixes chosen without overlap (`edits`), then written into files without losing a byte
(`files`)."""
