"""Suppression comments: read the same way by every face (`comments`), and written on every
line with a finding by `--add-noqa` (`add`)."""
