"""pi-context."""
