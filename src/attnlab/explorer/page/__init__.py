"""The explorer page and its one input: the data dict (``data``), attention composed across
layers (``composed``), compact matrices (``encoding``) and the HTML itself (``render``). Nothing
here imports ``sources`` or ``server``."""
