import Foundation

/// Writes all of `data` to `descriptor` from `offset` (`pwrite`, again after a signal and for the
/// rest after a short write): 0 when every byte is written, else the `errno` of the failure.
func writeFully(_ data: Data, to descriptor: CInt, at offset: Int) -> CInt {
    data.withUnsafeBytes { buffer in
        var done = 0
        while done < buffer.count {
            let written = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            done += written
        }
        return 0
    }
}
