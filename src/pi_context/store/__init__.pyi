from pi_context.errors import InvalidEntryError as InvalidEntryError
from pi_context.errors import LeafMovedError as LeafMovedError
from pi_context.errors import SessionBusyError as SessionBusyError
from pi_context.errors import SessionNotFoundError as SessionNotFoundError
from pi_context.errors import StoreError as StoreError
from pi_context.errors import StoreSchemaError as StoreSchemaError
from pi_context.errors import StoreTimeoutError as StoreTimeoutError
from pi_context.errors import StoreUnavailableError as StoreUnavailableError

from .base import ANY_LEAF as ANY_LEAF
from .base import AppendResult as AppendResult
from .base import Lease as Lease
from .base import SessionPage as SessionPage
from .base import SessionRef as SessionRef
from .base import SessionStore as SessionStore
from .base import SessionSummary as SessionSummary
from .base import StoredSession as StoredSession
from .base import TenantHit as TenantHit
from .binding import TURN_LEASE_TTL as TURN_LEASE_TTL
from .binding import StoreBinding as StoreBinding
from .file import FileStore as FileStore
from .memory import MemoryStore as MemoryStore
from .opening import open_store as open_store
from .postgres import PostgresStore as PostgresStore

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
