"""Generated, tuned MLP modules (see README.md)."""
