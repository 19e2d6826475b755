"""A prompt's images made ready: fitted, wrong MIME types corrected, unusable ones dropped and
named in the prompt text (``<text>\\n\\n<notes>``)."""

from __future__ import annotations

from pi_context.images import ImageLimits, prepare_prompt_images
from pi_context.messages import image_block
from tests.images.helpers import b64, image_bytes


def test_fitting_images_are_kept_as_given() -> None:
    image = image_block(b64(image_bytes("PNG")), "image/png")
    prepared = prepare_prompt_images("hi", [image])
    assert prepared.text == "hi"
    assert prepared.images == (image,)
    assert prepared.images[0] is image


def test_a_wrong_mime_type_is_corrected_from_the_content() -> None:
    data = b64(image_bytes("JPEG"))
    prepared = prepare_prompt_images("hi", [image_block(data, "image/png")])
    assert prepared.images == (image_block(data, "image/jpeg"),)


def test_unusable_images_are_dropped_and_said_so_and_scaled_ones_hinted() -> None:
    big = image_block(b64(image_bytes("PNG", size=(300, 100))), "image/png")
    prepared = prepare_prompt_images(
        "look",
        [image_block("not base64!", "image/png"), big, image_block(b64(b"text"), "image/png")],
        ImageLimits(max_width=150, max_height=150),
    )
    assert [i["mimeType"] for i in prepared.images] == ["image/png"]
    assert prepared.text == (
        "look\n\n"
        "[Image 1 was not attached: image data is not valid base64]\n"
        "[Image scaled from 300x100 to 150x50 pixels to fit the model's limits; multiply "
        "coordinates in it by 2.00 to map them to the original.]\n"
        "[Image 3 was not attached: not a PNG, JPEG, GIF, WebP or BMP image]"
    )


def test_without_auto_resize_images_are_only_checked() -> None:
    big = image_block(b64(image_bytes("PNG", size=(3000, 10))), "image/png")
    prepared = prepare_prompt_images("x", [big], resize=False)
    assert prepared.images == (big,)
    assert prepared.text == "x"
