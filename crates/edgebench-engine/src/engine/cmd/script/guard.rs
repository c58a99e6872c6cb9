//! The sandbox's `setmetatable` and `getmetatable`: Lua's own, except on the read-only
//! tables the prelude makes (globals, libraries, `redis`), which in Redis are real tables
//! with a read-only mark and here are empty proxies.
//!
//! - `setmetatable` on one raises `Attempt to modify a readonly table`, with no position,
//!   as Redis's Lua raises it from inside the C function.
//! - `getmetatable` on one gives what Redis's gives: for the globals, a read-only table
//!   with an `__index` function; for the others, nil (they have no metatable in Redis).
//!
//! Both are C functions, so an argument error names the user's line (`user_script:1: bad
//! argument #1 to 'setmetatable'`) as Lua's own do: a Lua wrapper would put its own frame
//! between the user and the error. Each is a C closure over two tables the prelude owns:
//! upvalue 1 holds the read-only proxies (as keys), upvalue 2 maps a proxy to what
//! `getmetatable` shows for it.

use std::os::raw::c_int;

use mlua::ffi;

/// `native.metatable_guards(protected, views)`: the two closures, `setmetatable` first.
pub(super) fn closures(
    lua: &mlua::Lua,
    (protected, views): (mlua::Table, mlua::Table),
) -> mlua::Result<(mlua::Function, mlua::Function)> {
    // SAFETY: `exec_raw` leaves the two tables at stack slots 1 and 2; each closure takes
    // copies of both as its upvalues, then the tables are removed, leaving the closures.
    unsafe {
        lua.exec_raw::<(mlua::Function, mlua::Function)>((protected, views), |state| {
            for f in [
                guarded_setmetatable as ffi::lua_CFunction,
                guarded_getmetatable,
            ] {
                ffi::lua_pushvalue(state, 1);
                ffi::lua_pushvalue(state, 2);
                ffi::lua_pushcclosure(state, f, 2);
            }
            ffi::lua_remove(state, 1);
            ffi::lua_remove(state, 1);
        })
    }
}

/// Whether the value at `index` is one of the read-only proxies (a key of upvalue 1).
///
/// # Safety
/// `state` runs one of this module's closures; `index` is a valid absolute index.
unsafe fn is_protected(state: *mut ffi::lua_State, index: c_int) -> bool {
    // SAFETY: the caller's contract; pushes one value and pops it.
    unsafe {
        ffi::lua_pushvalue(state, index);
        ffi::lua_rawget(state, ffi::lua_upvalueindex(1));
        let yes = ffi::lua_toboolean(state, -1) != 0;
        ffi::lua_pop(state, 1);
        yes
    }
}

/// `setmetatable(t, mt)`.
unsafe extern "C-unwind" fn guarded_setmetatable(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua with `state` live; the raising calls below unwind to the
    // protected call with no Rust value alive in this frame.
    unsafe {
        let mt = ffi::lua_type(state, 2);
        ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
        if mt != ffi::LUA_TNIL && mt != ffi::LUA_TTABLE {
            ffi::luaL_argerror(state, 2, c"nil or table expected".as_ptr());
        }
        if is_protected(state, 1) {
            ffi::lua_pushstring(state, c"Attempt to modify a readonly table".as_ptr());
            ffi::lua_error(state);
        }
        if ffi::luaL_getmetafield(state, 1, c"__metatable".as_ptr()) != ffi::LUA_TNIL {
            ffi::luaL_error(state, c"cannot change a protected metatable".as_ptr());
        }
        ffi::lua_settop(state, 2);
        ffi::lua_setmetatable(state, 1);
        1
    }
}

/// `getmetatable(v)`.
unsafe extern "C-unwind" fn guarded_getmetatable(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: as `guarded_setmetatable`.
    unsafe {
        ffi::luaL_checkany(state, 1);
        if is_protected(state, 1) {
            ffi::lua_pushvalue(state, 1);
            ffi::lua_rawget(state, ffi::lua_upvalueindex(2));
            return 1;
        }
        if ffi::lua_getmetatable(state, 1) == 0 {
            ffi::lua_pushnil(state);
            return 1;
        }
        // A `__metatable` field stands in for the metatable, as in Lua's own.
        ffi::luaL_getmetafield(state, 1, c"__metatable".as_ptr());
        1
    }
}
