"""The files a scan reads: which ones (`discovery`, with gitignore rules read as git reads them
in `gitignore`), in which language (`languages`), and what is kept of them between scans
(`result_cache`)."""
