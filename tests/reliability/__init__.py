"""Crashes, kills, faults, bad inputs."""
