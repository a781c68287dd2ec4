"""The reader stage: which frames to read, which readings to reuse, and where each text appeared and vanished."""
