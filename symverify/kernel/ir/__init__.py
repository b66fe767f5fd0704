"""Trusted IR: circuits, models, kaleidoscopes, certificates, exact scalars and their validation."""
