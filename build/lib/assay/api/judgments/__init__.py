"""Judge mode: judge models rate a dataset's questions (myarena §3.6, §3.7)."""
