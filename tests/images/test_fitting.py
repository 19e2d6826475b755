"""Decoding and fitting images: original bytes kept when they fit, scaled with a hint when not,
hostile data refused with a one-line reason and bounded work."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from pi_context.errors import ImageError
from pi_context.images import (
    DEFAULT_IMAGE_LIMITS,
    ImageLimits,
    fit_image,
    image_limits_from,
    inspect_image,
    sniff_image_mime,
)
from tests.images.helpers import image_bytes, png_bomb


def size_of(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        return image.size


@pytest.mark.parametrize(
    ("fmt", "mime"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")],
)
def test_an_image_that_fits_keeps_its_bytes(fmt: str, mime: str) -> None:
    data = image_bytes(fmt)
    assert sniff_image_mime(data) == mime
    fitted = fit_image(data)
    assert fitted.data is data
    assert (fitted.mime, fitted.width, fitted.height, fitted.hints) == (mime, 8, 6, ())


def test_a_large_image_is_scaled_to_the_limits_with_a_hint() -> None:
    fitted = fit_image(image_bytes("PNG", size=(4000, 1000)))
    assert (fitted.mime, fitted.width, fitted.height) == ("image/png", 2000, 500)
    assert size_of(fitted.data) == (2000, 500)
    assert fitted.hints == (
        "[Image scaled from 4000x1000 to 2000x500 pixels to fit the model's limits; multiply "
        "coordinates in it by 2.00 to map them to the original.]",
    )


def test_a_large_jpeg_stays_jpeg() -> None:
    fitted = fit_image(image_bytes("JPEG", size=(3000, 3000)), ImageLimits(1000, 800))
    assert (fitted.mime, size_of(fitted.data)) == ("image/jpeg", (800, 800))


def test_the_byte_limit_forces_jpeg_then_smaller_sizes() -> None:
    noisy = Image.effect_noise((600, 600), 100).convert("RGB")
    out = io.BytesIO()
    noisy.save(out, "PNG")
    limits = ImageLimits(max_width=2000, max_height=2000, max_base64_bytes=20_000)
    fitted = fit_image(out.getvalue(), limits)
    assert fitted.mime == "image/jpeg"
    assert len(fitted.data) * 4 / 3 <= 20_000 + 4
    assert fitted.width < 600


def test_bmp_is_converted_for_the_wire() -> None:
    fitted = fit_image(image_bytes("BMP"))
    assert (fitted.mime, size_of(fitted.data)) == ("image/png", (8, 6))


def test_transparency_survives_scaling() -> None:
    fitted = fit_image(image_bytes("PNG", size=(3000, 10), color=(0, 0, 0, 0)))
    with Image.open(io.BytesIO(fitted.data)) as image:
        assert image.mode == "RGBA"
        assert image.getpixel((0, 0)) == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"plain text, not an image", "not a PNG, JPEG, GIF, WebP or BMP image"),
        (image_bytes("PNG", size=(400, 300))[:300], "image/png data is truncated or corrupt"),
        (png_bomb(10_000, 6_000), "image is 10000x6000 pixels, over the 50 megapixels"),
        (png_bomb(100_000, 100_000), "image is over the 50 megapixels pictx decodes"),
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 40, "image/png data cannot be decoded"),
    ],
)
def test_hostile_data_is_a_one_line_image_error(data: bytes, why: str) -> None:
    for check in (inspect_image, fit_image):
        with pytest.raises(ImageError) as caught:
            check(data)
        assert str(caught.value).startswith(why)
        assert "\n" not in str(caught.value)


def test_limits_come_from_input_limits_and_bad_values_keep_defaults() -> None:
    assert image_limits_from(None) == DEFAULT_IMAGE_LIMITS
    assert image_limits_from({"images": {"resize": {"maxWidth": 1024, "jpegQuality": 60}}}) == (
        ImageLimits(max_width=1024, jpeg_quality=60)
    )
    bad = {"images": {"resize": {"maxWidth": 0, "maxHeight": "9", "maxBytes": True}}}
    assert image_limits_from(bad) == DEFAULT_IMAGE_LIMITS
