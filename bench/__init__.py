"""Benchmarks (not tests): each compares our code with a baseline in the same run."""
