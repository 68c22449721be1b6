/// `count` followed by `noun`, in the plural unless `count` is 1: `1 request`, `0 requests`,
/// `3 requests`. `plural` is the plural when it is not `noun` + "s".
func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
}
