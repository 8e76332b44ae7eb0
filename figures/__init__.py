"""The figure scripts of the repository (never installed): run them from the repository root as
``python -m figures.make_figures`` (all) or ``python -m figures.fig_<topic>`` (one); see
``figures/_tools.py``."""
