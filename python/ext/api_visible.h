/* api_visible.h: included ahead of every source of the extension module (-include), which
 * is compiled with -fvisibility=hidden: the functions of the public headers keep default
 * visibility, so that the plugins that the module loads (mbd_plugin_load) resolve them in
 * it, while the library's internals stay hidden. */
#pragma GCC visibility push(default)
#include "mbd.h"
#include "mbd_plugin.h"
#pragma GCC visibility pop
