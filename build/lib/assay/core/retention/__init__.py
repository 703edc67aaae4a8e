"""Data retention (edison §8.5): what old data goes, planned first, then applied exactly."""
