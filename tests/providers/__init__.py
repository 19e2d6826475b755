"""Tests of pi_context.providers."""
