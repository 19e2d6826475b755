from .fitting import MAX_SOURCE_BYTES as MAX_SOURCE_BYTES
from .fitting import MAX_SOURCE_PIXELS as MAX_SOURCE_PIXELS
from .fitting import FittedImage as FittedImage
from .fitting import ImageFacts as ImageFacts
from .fitting import fit_image as fit_image
from .fitting import inspect_image as inspect_image
from .limits import DEFAULT_IMAGE_LIMITS as DEFAULT_IMAGE_LIMITS
from .limits import ImageLimits as ImageLimits
from .limits import image_limits_from as image_limits_from
from .prompt_images import PreparedPrompt as PreparedPrompt
from .prompt_images import fit_read_result as fit_read_result
from .prompt_images import prepare_prompt_images as prepare_prompt_images
from .sniff import SNIFF_BYTES as SNIFF_BYTES
from .sniff import WIRE_MIME_TYPES as WIRE_MIME_TYPES
from .sniff import sniff_image_mime as sniff_image_mime

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
