"""Rendering of results: terminal lines now; JSON and HTML reports build on the same data."""
