"""Command-line tools shipped with xjax (`python -m xjax.tools.launch`)."""
