"""An Android userland for the simulated phone: the shell, its commands, the file system, the package
manager and the realism profile, as ``adb shell`` sees them on a real phone."""
