"""Sphinx configuration of b2lazy's documentation site (bash scripts/docs.sh builds it).

The Markdown pages are MyST-NB notebooks: their ``{code-cell}`` blocks run when the site is
built, in a temporary folder, and any error fails the build. The gallery
(``examples/gallery/*.py``) runs through sphinx-gallery. The API reference is generated:
``_ext/b2lazy_reference.py`` writes the autosummary lists from ``b2lazy.__all__`` and the
function registry, a page per subcommand of the ``b2lazy`` command from its ``--help``, and
a page per public C++ header; it fails the build when a public name has no page.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))

import b2lazy  # noqa: E402

project = "b2lazy"
author = "the b2lazy developers"
copyright = "the b2lazy developers"
version = release = b2lazy.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_nb",
    "sphinx_gallery.gen_gallery",
    "b2lazy_reference",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.ipynb", "auto_examples/*.py"]
templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
root_doc = "index"

# The reference: a page per public name, numpydoc's sections, no duplicated member tables.
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
add_module_names = True

# MyST: executed pages. Each page runs in a fresh kernel in a temporary folder, so the files
# it writes (a.b2nd, out.zarr, ...) never land in the source tree; an error fails the build.
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "force"
nb_execution_in_temp = True
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 300
nb_merge_streams = True

# The gallery: examples/gallery/*.py, run at build time, their plots kept.
sphinx_gallery_conf = {
    "examples_dirs": ["../examples/gallery"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "show_memory": False,
    "image_scrapers": ("matplotlib",),
}

intersphinx_mapping = {}

html_theme = "pydata_sphinx_theme"
html_title = f"b2lazy {version}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
html_static_path = []
html_show_sourcelink = False
