"""Measurement instruments that run on a bed or between any two hosts."""
