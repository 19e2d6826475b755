from .anthropic import AnthropicModel as AnthropicModel
from .google import GoogleModel as GoogleModel
from .key_templates import Credentials as Credentials
from .local import LocalModel as LocalModel
from .models_json import ModelEntry as ModelEntry
from .models_json import parse_models_json as parse_models_json
from .openai import OpenAIChatModel as OpenAIChatModel
from .openai_responses import OpenAIResponsesModel as OpenAIResponsesModel
from .registry import ModelRegistry as ModelRegistry
from .registry import Resolution as Resolution
from .registry import default_model as default_model
from .registry import list_models as list_models
from .registry import load_registry as load_registry
from .registry import resolve_model as resolve_model

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
