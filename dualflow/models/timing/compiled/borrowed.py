"""Borrowed state: arrays and structrefs that njit code reads without reference counting.

numba counts the references to every array it reads from a structref's field and to every
structref it receives as an argument: an atomic increment and a later decrement
(``NRT_incref``/``NRT_decref``) per read and per call, which LLVM's reference-count pruning
leaves in place across the SM pipeline's branches and calls. They were most of the timing
core's time. Two kinds of borrowed values take them away:

- ``borrowed_view(array)``: a view whose memory-info pointer is null. NRT skips a null pointer,
  and LLVM then drops the calls altogether. Such a view does not keep its memory alive: the
  structrefs of core.py, layout.py and memory_state.py are built from borrowed views of arrays that Python
  owns, and their proxies hold the owners (``keep``). njit code that replaces a field (a
  timeline that grows) stores an ordinary, counted array, which the structref then owns as it
  would any other; the heaps keep a new array in an owning field and a borrowed view of it in
  the field the pipeline reads (core.py ``Heaps``), and a function's local array outlives its
  views with ``keep_alive``. Boxing a borrowed view back to Python returns its owner (the view
  keeps numpy's parent pointer).
- ``borrow(struct)``: a structref's payload as a bare pointer (type ``Borrowed``), with the
  structref's fields as attributes. Passing it costs no count; reading a field that is itself
  a structref gives a ``Borrowed`` of it, and reading an array field gives a view with a
  constant null pointer, which LLVM sees is never counted: such a view is valid while the
  field holds that array (a function that replaces a field reads it anew afterwards). Writing
  a field counts as a structref's setter does. ``run_launch`` borrows its structrefs once, for
  a launch during which the engine holds them.
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.core import cgutils, imputils
from numba.core.datamodel import models, register_default
from numba.core.extending import infer_getattr, intrinsic, lower_getattr_generic, lower_setattr_generic
from numba.core.typing.templates import AttributeTemplate


@intrinsic
def borrowed_view(typingctx, array):
    """A view of ``array`` that njit code does not reference-count (see the module docstring)."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        view = context.make_array(array)(context, builder, value=args[0])
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        return view._getvalue()

    return array(array), codegen


@intrinsic
def keep_alive(typingctx, owner):
    """A use of ``owner`` that does nothing: numba frees a local array after its last use, so a
    function whose borrowed views of a local array outlive that use ends with this call."""
    def codegen(context, builder, signature, args):
        return context.get_dummy_value()

    return types.none(owner), codegen


def keep(proxy, owner: Any):
    """``proxy`` (a structref built from borrowed views) holding ``owner``, what owns their
    memory, for as long as it lives."""
    proxy.owner = owner
    return proxy


class Borrowed(types.Type):
    """The payload of a structref of type ``struct``, borrowed: a pointer, not counted."""

    def __init__(self, struct: types.StructRef):
        self.struct = struct
        super().__init__(name=f"Borrowed({struct})")


@register_default(Borrowed)
class _BorrowedModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        payload = dmm.lookup(fe_type.struct.get_data_type()).get_value_type()
        super().__init__(dmm, fe_type, payload.as_pointer())


def _payload_pointer(context, builder, struct: types.StructRef, value):
    meminfo = cgutils.create_struct_proxy(struct)(context, builder, value=value).meminfo
    return builder.bitcast(context.nrt.meminfo_data(builder, meminfo), context.get_value_type(Borrowed(struct)))


@intrinsic
def borrow(typingctx, struct):
    """The structref ``struct`` borrowed (``Borrowed``): the caller keeps it alive meanwhile."""
    if not isinstance(struct, types.StructRef):
        return None

    def codegen(context, builder, signature, args):
        return _payload_pointer(context, builder, struct, args[0])

    return Borrowed(struct)(struct), codegen


@infer_getattr
class _BorrowedAttributes(AttributeTemplate):
    key = Borrowed

    def generic_resolve(self, typ, attr):
        field = typ.struct.field_dict.get(attr)
        return Borrowed(field) if isinstance(field, types.StructRef) else field


def _payload(context, builder, typ: Borrowed, value):
    return cgutils.create_struct_proxy(typ.struct.get_data_type())(context, builder, ref=value)


@lower_getattr_generic(Borrowed)
def _getattr(context, builder, typ, value, attr):
    field = getattr(_payload(context, builder, typ, value), attr)
    field_type = typ.struct.field_dict[attr]
    if isinstance(field_type, types.StructRef):
        return _payload_pointer(context, builder, field_type, field)
    if isinstance(field_type, types.Array):  # an uncounted view: a constant null memory-info pointer
        view = context.make_array(field_type)(context, builder, value=field)
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        return view._getvalue()
    return imputils.impl_ret_borrowed(context, builder, field_type, field)


@lower_setattr_generic(Borrowed)
def _setattr(context, builder, signature, args, attr):
    typ, value_type = signature.args
    instance, value = args
    payload = _payload(context, builder, typ, instance)
    field_type = typ.struct.field_dict[attr]
    if isinstance(field_type, types.StructRef):
        raise NotImplementedError("a borrowed structref's structref fields are read-only")
    cast = context.cast(builder, value, value_type, field_type)
    old = getattr(payload, attr)
    context.nrt.incref(builder, field_type, cast)
    context.nrt.decref(builder, field_type, old)  # last: the new value may be the old one
    setattr(payload, attr, cast)
