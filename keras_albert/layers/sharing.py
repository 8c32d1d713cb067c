"""Which parameters each layer of a shared ALBERT encoder uses.

Google's release routes layer `l` of `L` to group `int(l / L * G)`; every
group holds `inner_group_num` blocks run in order. The ALBERT paper's
ablation additionally shares only the attention or only the feed-forward
half. Both ideas compose: a half that is shared is owned by the group, a
half that is not is owned by the layer.
"""

from keras_albert.utils.validation import check_choice
from keras_albert.utils.validation import check_positive_int

SHARING_STRATEGIES = ("all", "attention", "ffn", "none")


def group_for_layer(layer_index, num_layers, num_groups):
    """Group of layer `layer_index`: `int(l / L * G)` in exact integer math."""
    return (layer_index * num_groups) // num_layers


def validate_sharing(num_layers, num_groups, num_inner_repetitions, sharing):
    check_positive_int("num_layers", num_layers)
    check_positive_int("num_groups", num_groups)
    check_positive_int("num_inner_repetitions", num_inner_repetitions)
    check_choice("sharing", sharing, SHARING_STRATEGIES)
    if num_groups > num_layers:
        raise ValueError(
            "`num_groups` cannot exceed `num_layers` (a group no layer uses "
            f"would hold dead weights). Received: num_groups={num_groups}, "
            f"num_layers={num_layers}"
        )


def sharing_plan(num_layers, num_groups, num_inner_repetitions, sharing):
    """Returns, for each layer, a list over inner repetitions of
    `(attention_owner, feed_forward_owner)` names.

    An owner is `"group_{g}_inner_{i}"` for a shared half and
    `"layer_{l}_inner_{i}"` for an unshared one; equal names mean the same
    weights.
    """
    validate_sharing(num_layers, num_groups, num_inner_repetitions, sharing)
    share_attention = sharing in ("all", "attention")
    share_feed_forward = sharing in ("all", "ffn")
    plan = []
    for layer in range(num_layers):
        group = group_for_layer(layer, num_layers, num_groups)
        inner_plan = []
        for inner in range(num_inner_repetitions):
            shared = f"group_{group}_inner_{inner}"
            own = f"layer_{layer}_inner_{inner}"
            inner_plan.append(
                (
                    shared if share_attention else own,
                    shared if share_feed_forward else own,
                )
            )
        plan.append(inner_plan)
    return plan
