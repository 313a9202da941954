"""Build-time generator of flarekit_models from pinned upstream CRDs.

The pipeline is parser -> intermediate model -> structural de-duplication and
core-type hoisting -> Jinja templates -> formatter. See ``__main__`` for the
command line and ``pipeline`` for the stages.
"""

__version__ = "0.1.0"
