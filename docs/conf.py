"""Sphinx configuration of fedsearch's documentation site.

Build (offline, warnings as errors), from the repository root::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

import os
import sys
from pathlib import Path

# the gallery runs many tiny fits: one BLAS / OpenMP thread each is fastest on a shared machine
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # document this checkout, whatever is installed

import fedsearch  # noqa: E402

project = "fedsearch"
author = "the fedsearch developers"
copyright = "the fedsearch developers, BSD-3-Clause"  # noqa: A001 - Sphinx's name
release = version = fedsearch.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "results"]
templates_path = ["_templates"]

# --------------------------------------------------------------------------- API pages
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": "BaseEstimator"}
autodoc_typehints = "none"  # the numpydoc type lines say it
numpydoc_show_class_members = False  # autodoc lists the members instead
numpydoc_xref_param_type = False


def _skip_metadata_routing(app, what, name, obj, skip, options):
    """scikit-learn's metadata-routing plumbing (``set_*_request``, ``get_metadata_routing``) is
    documented by scikit-learn; its docstrings point into scikit-learn's own guide."""
    if name == "get_metadata_routing" or (name.startswith("set_") and name.endswith("_request")):
        return True
    return skip


def _optional_pages(app, docname, source):
    """Drop the toctree entries of optional pages that are absent (the Flower deployment page is
    written separately), so that the site builds with or without them."""
    if docname == "index":
        for page in OPTIONAL_PAGES:
            if not any((Path(app.srcdir) / f"{page}{suffix}").exists() for suffix in source_suffix):
                source[0] = source[0].replace(f"\n{page}\n", "\n")


OPTIONAL_PAGES = ("deployment",)


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_routing)
    app.connect("source-read", _optional_pages)


# --------------------------------------------------------------------------- Markdown pages
myst_heading_anchors = 4  # links such as benchmarks.md#bandits-the-x-armed-synthetic-experiments

# --------------------------------------------------------------------------- the gallery
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples" / "gallery"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",  # every example runs and its figures are kept
    "doc_module": ("fedsearch",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"fedsearch": None},
    "download_all_examples": False,
    "remove_config_comments": True,
    "min_reported_time": 1,
    "within_subsection_order": "FileNameSortKey",
    "capture_repr": ("_repr_html_",),  # tables as HTML; no reprs of artists or displays
}

# --------------------------------------------------------------------------- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"fedsearch {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_show_sourcelink = False
