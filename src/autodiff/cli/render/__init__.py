"""Renderers: reports in, text out. Rich for people, plain and JSON for scripts, DOT and Mermaid for graphs."""
