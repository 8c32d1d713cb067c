import pytest

from keras_albert.layers.sharing import group_for_layer
from keras_albert.layers.sharing import sharing_plan


@pytest.mark.parametrize(
    "num_layers,num_groups", [(12, 1), (12, 2), (12, 5), (24, 7), (3, 3), (7, 4)]
)
def test_group_mapping_matches_google_formula(num_layers, num_groups):
    for layer in range(num_layers):
        # google-research/albert modeling.py: int(layer_idx / num_hidden_layers * num_hidden_groups)
        expected = int(layer / num_layers * num_groups)
        assert group_for_layer(layer, num_layers, num_groups) == expected


def test_uneven_groups_all_used_in_order():
    plan = sharing_plan(12, 5, 1, "all")
    groups = [owners[0][0] for owners in plan]
    assert groups == [f"group_{int(l / 12 * 5)}_inner_0" for l in range(12)]
    assert len(set(groups)) == 5


def test_inner_repetitions_run_in_order():
    plan = sharing_plan(2, 1, 3, "all")
    assert [a for a, _ in plan[0]] == [f"group_0_inner_{i}" for i in range(3)]
    assert plan[0] == plan[1]


@pytest.mark.parametrize(
    "sharing,attention_owners,ffn_owners",
    [("all", 1, 1), ("none", 12, 12), ("attention", 1, 12), ("ffn", 12, 1)],
)
def test_distinct_owners_per_strategy(sharing, attention_owners, ffn_owners):
    plan = sharing_plan(12, 1, 1, sharing)
    assert len({a for layer in plan for a, _ in layer}) == attention_owners
    assert len({f for layer in plan for _, f in layer}) == ffn_owners


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(num_layers=2, num_groups=3), "num_groups"),
        (dict(num_layers=0, num_groups=1), "num_layers"),
        (dict(num_layers=2, num_groups=1, sharing="some"), "sharing"),
        (dict(num_layers=2, num_groups=1, num_inner_repetitions=0), "num_inner"),
    ],
)
def test_bad_sharing_arguments(kwargs, message):
    kwargs = dict(dict(num_inner_repetitions=1, sharing="all"), **kwargs)
    with pytest.raises(ValueError, match=message):
        sharing_plan(**kwargs)
