"""Tests of ufo_mobile.report."""
