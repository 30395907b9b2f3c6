"""The commands, one module each: read the input, ask the program layer for a result, hand it to
a renderer (cli/render). cli/app.py registers them with Typer."""
