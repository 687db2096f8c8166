"""Settling disputes: the review, the chronicle exports, and `conteur verify`."""
