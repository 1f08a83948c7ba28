#pragma once
// A small model for the heap tests: an abstract base with two subclasses, a class with every
// kind of field, and classes of 16, 64 and 256 bytes for churn.

#include "shoal/shoal.hpp"

namespace shoal::test {

struct vec2 {
  float x, y;
};

class Node;
class Animal;
class Cat;
class Dog;
class Small;
class Medium;
class Large;
using TestHeap = shoal::heap<Node, Animal, Cat, Dog, Small, Medium, Large>;

/// Counts destructor runs, so tests can see that `delete` ran the right one.
struct destructor_counts {
  unsigned long long cats = 0, dogs = 0;
};

class Node : public object<TestHeap, Node> {
 public:
  SHOAL_FIELDS(Node, (int, value), (double, weight), (vec2, position), (Node*, next),
               (int[4], history), (char, tag))
  SHOAL_HD explicit Node(int v) {
    value = v;
    weight = 0.5 * v;
    position = vec2{1.0f * v, -1.0f * v};
    next = nullptr;
    for (int i = 0; i < 4; ++i) history[i] = v + i;
    tag = 'n';
  }
  SHOAL_HD Node* neighbour() const { return next; }
};

class Animal : public object<TestHeap, Animal> {
 public:
  SHOAL_ABSTRACT(Animal)
  SHOAL_FIELDS(Animal, (int, legs), (destructor_counts*, counts))
};

class Cat : public object<TestHeap, Cat, Animal> {
 public:
  SHOAL_FIELDS(Cat, (float, purr))
  SHOAL_HD Cat(destructor_counts* c, float p) {
    legs = 4;
    counts = c;
    purr = p;
  }
  SHOAL_HD ~Cat() { arch::fetch_add(counts->cats, 1ull); }
};

class Dog : public object<TestHeap, Dog, Animal> {
 public:
  SHOAL_FIELDS(Dog, (double, bark), (long long, bones))
  SHOAL_HD Dog(destructor_counts* c, long long b) {
    legs = 3;
    counts = c;
    bones = b;
    bark = 2.0;
  }
  SHOAL_HD ~Dog() { arch::fetch_add(counts->dogs, 1ull); }
};

/// 16, 64 and 256 bytes of fields; each remembers who created it.
class Small : public object<TestHeap, Small> {
 public:
  SHOAL_FIELDS(Small, (unsigned long long, owner), (unsigned long long, check))
  SHOAL_HD explicit Small(unsigned long long id) { owner = id, check = ~id; }
  SHOAL_HD bool intact(unsigned long long id) const { return owner == id && check == ~id; }
};
class Medium : public object<TestHeap, Medium> {
 public:
  SHOAL_FIELDS(Medium, (unsigned long long, owner), (unsigned long long[7], payload))
  SHOAL_HD explicit Medium(unsigned long long id) {
    owner = id;
    for (int i = 0; i < 7; ++i) payload[i] = id + i;
  }
  SHOAL_HD bool intact(unsigned long long id) const { return owner == id && payload[6] == id + 6; }
};
class Large : public object<TestHeap, Large> {
 public:
  SHOAL_FIELDS(Large, (unsigned long long, owner), (unsigned long long[31], payload))
  SHOAL_HD explicit Large(unsigned long long id) {
    owner = id;
    payload[30] = id * 3;
  }
  SHOAL_HD bool intact(unsigned long long id) const { return owner == id && payload[30] == id * 3; }
};

}  // namespace shoal::test
