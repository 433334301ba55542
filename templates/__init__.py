"""Jinja templates for mlpgen kernels and generated modules (shipped as package data)."""
