#!/bin/sh
# The VM's desktop: Xvfb at the size the kernel's command line gives (coda.screen=WxH, set by the
# host from the VM's config), openbox, the AT-SPI bus in one D-Bus session, and the in-VM server.
# Qt apps draw in software and KAlgebra's web view without a GPU process: under QEMU's emulation
# (TCG) a GPU path burns a core doing nothing (measured in issue 45).
set -eu
screen=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^coda\.screen=//p')
export DISPLAY=:0
export QT_QUICK_BACKEND=software QT_ACCESSIBILITY=1 QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1
export QTWEBENGINE_CHROMIUM_FLAGS=--disable-gpu LIBGL_ALWAYS_SOFTWARE=1
rm -f /tmp/.X0-lock /tmp/.X11-unix/X0
Xvfb :0 -screen 0 "${screen:-1280x800}x24" -nolisten tcp &
i=0
while [ ! -S /tmp/.X11-unix/X0 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
exec dbus-run-session -- sh -c '
  openbox &
  /usr/libexec/at-spi-bus-launcher --launch-immediately &
  exec python3 /opt/coda/osworld_server.py --port 5000
'
