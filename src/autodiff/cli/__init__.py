"""The `autodiff` command: thin commands over the program layer (and testing), with renderers."""
