#include <vector>

namespace geo {

struct Point {
    double x, y;
};

double area(const std::vector<Point>& pts) {
    double a = 0;
    for (size_t i = 0; i < pts.size(); ++i) {
        const auto& p = pts[i];
        const auto& q = pts[(i + 1) % pts.size()];
        a += p.x * q.y - q.x * p.y;
    }
    return a / 2;
}

}  // namespace geo
