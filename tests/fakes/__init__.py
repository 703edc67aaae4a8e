"""In-process fakes for tests."""
