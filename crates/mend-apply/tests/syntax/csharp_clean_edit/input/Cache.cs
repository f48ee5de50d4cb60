using System.Collections.Generic;

namespace Demo
{
    public class Cache
    {
        private readonly Dictionary<string, string> _items = new();

        public string Get(string key)
        {
            return _items.TryGetValue(key, out var v) ? v : "";
        }
    }
}
