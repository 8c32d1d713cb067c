"""Publish a preset: a directory with a model card and checked exports,
uploaded to Kaggle or Hugging Face when a handle is given (what `python -m
keras_albert publish` runs). Its exports need TensorFlow; the preset and
card alone do not."""

import json


def run_publish(preset, output, handle=None, **options):
    """`keras_albert.publishing.publish_preset(preset, output, handle, **options)`,
    with a failed upload reported as an unusable destination (`OSError`,
    one line; the local directory is complete). Returns its result."""
    from keras_albert.publishing.hub_upload import UploadError
    from keras_albert.publishing.publisher import publish_preset

    print(f"Publishing {preset!r} to {output!r}" + (f" and {handle}" if handle else ""), flush=True)
    try:
        result = publish_preset(preset, output, handle, **options)
    except UploadError as error:
        raise OSError(str(error)) from None
    print(json.dumps(result, indent=2, default=str), flush=True)
    return result
