/**
 * The programs a local desktop runs, from Debian packages that infra/install.sh installs
 * (xvfb, openbox, dbus, at-spi2-core, x11-utils, xdotool, python3-pyatspi). Screenshots need no
 * program: Node reads the screen from the X server (io/x11-image.ts). What else an app's driver
 * runs (KAlgebra: calgebra) belongs to the driver.
 */
export interface DesktopTools {
  readonly xvfb: string;
  readonly openbox: string;
  readonly dbusDaemon: string;
  readonly dbusSend: string;
  readonly atspiRegistryd: string;
  /** D-Bus configuration of an accessibility bus, shipped by at-spi2-core. */
  readonly atspiBusConfig: string;
  readonly xprop: string;
  readonly xdotool: string;
  /** The system python, which has pyatspi: it runs the desktop's AT-SPI reader (io/atspi_reader.py). */
  readonly python: string;
}

export const DEFAULT_TOOLS: DesktopTools = {
  xvfb: 'Xvfb',
  openbox: 'openbox',
  dbusDaemon: 'dbus-daemon',
  dbusSend: 'dbus-send',
  atspiRegistryd: '/usr/libexec/at-spi2-registryd',
  atspiBusConfig: '/usr/share/defaults/at-spi2/accessibility.conf',
  xprop: 'xprop',
  xdotool: 'xdotool',
  python: '/usr/bin/python3',
};
