"""Unit tests of course.grading.cell_names: what the names in a cell stand for, from its syntax alone."""

import ast

from course.grading import cell_names


def _expr(code: str):
    return ast.parse(code, mode="eval").body


def test_dotted_spells_an_attribute_chain_and_nothing_else():
    assert cell_names.dotted(_expr("torch.nn.functional.relu")) == "torch.nn.functional.relu"
    assert cell_names.dotted(_expr("f(x).y")) == "f.y"          # a call stands for what it calls
    assert cell_names.dotted(_expr("[os][0].path")) is None


def test_a_name_is_read_through_the_import_that_bound_it():
    tree = ast.parse("import sys as s\nfrom gc import get_objects as g\nimport os")
    imported = cell_names.import_map(tree)
    assert cell_names.canonical("s.modules.get", imported) == "sys.modules.get"
    assert cell_names.canonical("g", imported) == "gc.get_objects"
    assert cell_names.canonical("os.path.join", imported) == "os.path.join"
    assert cell_names.canonical("model.eval", imported) == "model.eval"


def test_aliases_follow_a_chain_of_bindings_to_a_watched_module():
    tree = ast.parse("import helpers\nm = helpers.probes_devices\nn = m\nother = 3")
    assert {"m", "n"} <= cell_names.aliases(tree, {"helpers"})
    assert "other" not in cell_names.aliases(tree, {"helpers"})


def test_an_attribute_dict_is_named_by_its_owner_and_self_is_its_own():
    assert cell_names.attribute_dict(_expr("vars(probe)")) == "probe"
    assert cell_names.attribute_dict(_expr("probe.__dict__")) == "probe"
    assert cell_names.attribute_dict(_expr("self.__dict__")) == ""
    assert cell_names.attribute_dict(_expr("probe.items")) == ""


def test_a_cell_with_magics_still_parses_and_a_broken_one_is_none():
    assert cell_names.parse("%timeit x = 1\nx = 2") is not None
    assert cell_names.parse("def broken(:") is None
