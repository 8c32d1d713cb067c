"""Which teacher layer each student layer learns from."""


def default_layer_map(student_layers, teacher_layers):
    """Spreads the student's layers evenly over the teacher's, last to last:
    student layer `i` learns from teacher layer `(i + 1) * T // S - 1`."""
    return [(i, (i + 1) * teacher_layers // student_layers - 1) for i in range(student_layers)]


def resolve_layer_map(layer_map, student_layers, teacher_layers):
    """Checks `layer_map` and returns it as a sorted list of
    `(student_layer, teacher_layer)` pairs (0-based virtual layers).

    Accepts None (the default map), a dict `{student: teacher}` or a list of
    pairs. Student layers must be distinct and increasing with the teacher
    layers (a progressive schedule trains them bottom-up).
    """
    if layer_map is None:
        return default_layer_map(student_layers, teacher_layers)
    accepted = (
        "a dict {student_layer: teacher_layer} or a list of (student_layer, "
        f"teacher_layer) pairs, with student layers in [0, {student_layers - 1}] "
        f"and teacher layers in [0, {teacher_layers - 1}]"
    )
    try:
        pairs = list(layer_map.items()) if isinstance(layer_map, dict) else list(layer_map)
        pairs = [tuple(pair) for pair in pairs]
    except TypeError:
        raise ValueError(f"`layer_map` must be {accepted}. Received: layer_map={layer_map!r}")
    if not pairs:
        raise ValueError(f"`layer_map` must not be empty; it must be {accepted}.")
    for pair in pairs:
        if len(pair) != 2 or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in pair
        ):
            raise ValueError(
                f"`layer_map` must be {accepted}. Received: layer_map={layer_map!r} "
                f"(bad entry {pair!r})"
            )
        student, teacher = pair
        if not 0 <= student < student_layers:
            raise ValueError(
                f"`layer_map` names student layer {student}, but the student has "
                f"{student_layers} layers (0 to {student_layers - 1}). "
                f"Received: layer_map={layer_map!r}"
            )
        if not 0 <= teacher < teacher_layers:
            raise ValueError(
                f"`layer_map` names teacher layer {teacher}, but the teacher has "
                f"{teacher_layers} layers (0 to {teacher_layers - 1}). "
                f"Received: layer_map={layer_map!r}"
            )
    pairs.sort()
    students = [s for s, _ in pairs]
    teachers = [t for _, t in pairs]
    if len(set(students)) != len(students) or teachers != sorted(teachers):
        raise ValueError(
            "`layer_map` must map each student layer once, with teacher layers "
            f"increasing along the student's. Received: layer_map={layer_map!r}"
        )
    return pairs
