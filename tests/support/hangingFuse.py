# Mounts a FUSE file system whose server never answers, not even FUSE_INIT: every look under the
# mount point waits on it. As root, by mount(2) itself (an unprivileged user gets the same from
# fusermount3, sshfs or rclone). Prints "mounted", then holds /dev/fuse open until it is killed;
# the kernel then fails whatever still waits (ENOTCONN).
# Usage: python3 hangingFuse.py MOUNT_POINT
import ctypes
import os
import sys
import time

mount_point = sys.argv[1]
device = os.open('/dev/fuse', os.O_RDWR)
libc = ctypes.CDLL(None, use_errno=True)
options = f'fd={device},rootmode=40000,user_id={os.getuid()},group_id={os.getgid()}'.encode()
if libc.mount(b'hanging', mount_point.encode(), b'fuse.hanging', 0, options) != 0:
    print('mount failed:', os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(1)
print('mounted', flush=True)
while True:
    time.sleep(3600)
