"""The `autodiff` command: thin commands over the language and the engine, with renderers."""
